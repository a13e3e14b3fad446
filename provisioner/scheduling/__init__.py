"""provisioner/scheduling"""
