"""provisioner/azure"""
